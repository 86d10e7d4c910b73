package dev.tokengap.proxy;

import java.time.Duration;

import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.Test;

import reactor.netty.http.HttpResources;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * {@link ProxyEventLoops}: its own loops where epoll is, Reactor Netty's with the switch
 * off.
 */
class ProxyEventLoopsTests {

	@Test
	void runsItsOwnNamedLoopsWhereEpollIs() throws Exception {
		assumeThat(Epoll.isAvailable()).as("epoll").isTrue();
		ProxyEventLoops loops = ProxyEventLoops.create();
		try {
			assertThat(loops.deferred()).isTrue();
			String name = loops.onServer(true).next().submit(() -> Thread.currentThread().getName()).get();
			assertThat(name).startsWith("tokengap-epoll-");
			assertThat(loops.onClient(true).next().inEventLoop()).isFalse();
		}
		finally {
			loops.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
		}
	}

	@Test
	void handsOutReactorNettysLoopsWithTheSwitchOff() {
		System.setProperty(ProxyEventLoops.SWITCH, "false");
		try {
			ProxyEventLoops loops = ProxyEventLoops.create();
			assertThat(loops.deferred()).isFalse();
			assertThat(loops.onServer(true)).isSameAs(HttpResources.get().onServer(true));
		}
		finally {
			System.clearProperty(ProxyEventLoops.SWITCH);
		}
	}

}
