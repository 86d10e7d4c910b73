package dev.tokengap.proxy;

import dev.tokengap.testsupport.PrometheusText;

/**
 * Reads tokengap's real {@code /actuator/prometheus} over HTTP.
 */
final class Scrapes {

	private Scrapes() {
	}

	static String text(int managementPort) {
		return PrometheusText.scrape(managementPort).text();
	}

	static PrometheusText prometheus(int managementPort) {
		return PrometheusText.scrape(managementPort);
	}

}
