package dev.tokengap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TokengapApplicationTests {

	@Test
	void nettyDefaultsNeverOverrideAFlagFromTheCommandLine() {
		// surefire starts this JVM with -Dio.netty.leakDetection.level=paranoid
		assertThat(System.getProperty("io.netty.leakDetection.level")).isEqualTo("paranoid");
		String allocator = System.getProperty("io.netty.allocator.type");
		String loops = System.getProperty("reactor.netty.ioWorkerCount");
		try {
			System.setProperty("io.netty.allocator.type", "adaptive");
			TokengapApplication.nettyDefaults();
			assertThat(System.getProperty("io.netty.leakDetection.level")).isEqualTo("paranoid");
			assertThat(System.getProperty("io.netty.allocator.type")).isEqualTo("adaptive");
			System.clearProperty("io.netty.allocator.type");
			TokengapApplication.nettyDefaults();
			assertThat(System.getProperty("io.netty.allocator.type")).isEqualTo("pooled");
			System.setProperty("reactor.netty.ioWorkerCount", "7");
			TokengapApplication.nettyDefaults();
			assertThat(System.getProperty("reactor.netty.ioWorkerCount")).isEqualTo("7");
			System.clearProperty("reactor.netty.ioWorkerCount");
			TokengapApplication.nettyDefaults();
			assertThat(System.getProperty("reactor.netty.ioWorkerCount"))
				.isEqualTo(Integer.toString(Runtime.getRuntime().availableProcessors()));
		}
		finally {
			restore("reactor.netty.ioWorkerCount", loops);
			restore("io.netty.allocator.type", allocator);
		}
	}

	private static void restore(String key, String value) {
		if (value == null) {
			System.clearProperty(key);
		}
		else {
			System.setProperty(key, value);
		}
	}

}
