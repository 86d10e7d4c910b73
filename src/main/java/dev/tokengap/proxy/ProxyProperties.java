package dev.tokengap.proxy;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Inbound request handling ({@code tokengap.proxy.*}).
 *
 * @param maxRequestBody largest request body read (413 above it); bodies are read whole
 * so that {@code model} and {@code stream} can be known before forwarding
 * @param clientSendBuffer the kernel send buffer of client connections; unset = the OS's
 * autotuning. A client that stops reading is only seen (as client backpressure) once this
 * buffer and the client's receive buffer are full, so a small value makes slow clients
 * visible sooner
 * @param requestTimeout longest a client may take to send a request's headers, and then
 * its body; also how long a keep-alive connection may wait for its next request. Slower
 * clients are disconnected (slow-loris); one whose body stops short is answered 408 first
 * @param sendTimeout longest a client's socket may accept no bytes of a response (nginx's
 * {@code send_timeout}); the client is then closed and the engine request cancelled, so a
 * reader that stopped cannot hold the engine's KV cache without bound (outcome
 * {@code client_cancelled})
 */
@ConfigurationProperties("tokengap.proxy")
public record ProxyProperties(@DefaultValue("16MB") DataSize maxRequestBody, DataSize clientSendBuffer,
		@DefaultValue("60s") Duration requestTimeout, @DefaultValue("60s") Duration sendTimeout) {

	public ProxyProperties {
		if (maxRequestBody.toBytes() <= 0 || maxRequestBody.toBytes() > Integer.MAX_VALUE) {
			throw new IllegalArgumentException(
					"tokengap.proxy.max-request-body must be between 1B and 2GB, got " + maxRequestBody);
		}
		if (sendTimeout.isNegative() || sendTimeout.isZero()) {
			throw new IllegalArgumentException("tokengap.proxy.send-timeout must be positive, got " + sendTimeout);
		}
		if (requestTimeout.isNegative() || requestTimeout.isZero()) {
			throw new IllegalArgumentException(
					"tokengap.proxy.request-timeout must be positive, got " + requestTimeout);
		}
	}

}
