package dev.tokengap.attribution;

import java.util.List;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code GET /actuator/spikes} on the management port: the last attributed spikes, newest
 * first.
 */
@Endpoint(id = "spikes")
public class SpikesEndpoint {

	private final SpikeAttributor attributor;

	public SpikesEndpoint(SpikeAttributor attributor) {
		this.attributor = attributor;
	}

	@ReadOperation
	public List<SpikeRecord> spikes() {
		return this.attributor.records();
	}

}
