package dev.tokengap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TokengapApplicationTests {

	@Test
	void nettyDefaultsNeverOverrideAFlagFromTheCommandLine() {
		// surefire starts this JVM with -Dio.netty.leakDetection.level=paranoid
		assertThat(System.getProperty("io.netty.leakDetection.level")).isEqualTo("paranoid");
		String allocator = System.getProperty("io.netty.allocator.type");
		try {
			System.setProperty("io.netty.allocator.type", "adaptive");
			TokengapApplication.nettyDefaults();
			assertThat(System.getProperty("io.netty.leakDetection.level")).isEqualTo("paranoid");
			assertThat(System.getProperty("io.netty.allocator.type")).isEqualTo("adaptive");
			System.clearProperty("io.netty.allocator.type");
			TokengapApplication.nettyDefaults();
			assertThat(System.getProperty("io.netty.allocator.type")).isEqualTo("pooled");
		}
		finally {
			if (allocator == null) {
				System.clearProperty("io.netty.allocator.type");
			}
			else {
				System.setProperty("io.netty.allocator.type", allocator);
			}
		}
	}

}
