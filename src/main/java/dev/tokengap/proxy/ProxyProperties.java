package dev.tokengap.proxy;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * Inbound request handling ({@code tokengap.proxy.*}).
 *
 * @param maxRequestBody largest request body read (413 above it); bodies are read whole so that
 * {@code model} and {@code stream} can be known before forwarding
 */
@Validated
@ConfigurationProperties("tokengap.proxy")
public record ProxyProperties(@DefaultValue("16MB") DataSize maxRequestBody) {

	public ProxyProperties {
		if (maxRequestBody.toBytes() <= 0 || maxRequestBody.toBytes() > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"tokengap.proxy.max-request-body must be between 1B and 2GB, got " + maxRequestBody);
		}
	}

}
