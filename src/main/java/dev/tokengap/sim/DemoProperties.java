package dev.tokengap.sim;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The demo's background load ({@code tokengap.demo.*}), used only in demo mode (no
 * upstream URL).
 *
 * @param load drive a gentle load through the proxy so the histograms fill at once
 * @param concurrency streams the demo keeps in flight
 */
@ConfigurationProperties("tokengap.demo")
public record DemoProperties(@DefaultValue("true") boolean load, @DefaultValue("4") int concurrency) {

	public DemoProperties {
		if (concurrency < 1 || concurrency > 64) {
			throw new IllegalArgumentException(
					"tokengap.demo.concurrency must be between 1 and 64, got " + concurrency);
		}
	}

}
