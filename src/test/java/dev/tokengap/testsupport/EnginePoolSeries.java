package dev.tokengap.testsupport;

import java.util.Set;

/**
 * The engine connection pool's series, Reactor Netty's own (not in the metrics contract):
 * the ones the README's pool table names and the rules and dashboards may read.
 */
public final class EnginePoolSeries {

	/** The series' names, as the Prometheus exposition has them. */
	public static final Set<String> NAMES = Set.of("reactor_netty_connection_provider_active_connections",
			"reactor_netty_connection_provider_idle_connections",
			"reactor_netty_connection_provider_pending_connections",
			"reactor_netty_connection_provider_max_connections", "reactor_netty_connection_provider_total_connections",
			"reactor_netty_connection_provider_pending_connections_time_seconds_count",
			"reactor_netty_connection_provider_pending_connections_time_seconds_sum",
			"reactor_netty_connection_provider_pending_connections_time_seconds_max");

	private EnginePoolSeries() {
	}

}
