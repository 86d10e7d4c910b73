package dev.tokengap.proxy;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;

import javax.net.ssl.KeyManagerFactory;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.server.HttpServer;

/**
 * An engine behind TLS on loopback, with a key pair and a self-signed certificate for
 * {@code localhost} made by the JDK's {@code keytool}; the certificate is also written as
 * PEM, for a Spring Boot SSL bundle to trust.
 */
record TlsEngine(DisposableServer server, Path certificate) {

	/** The engine's {@code /v1/models}: one served model. */
	static final String MODELS = "{\"object\":\"list\",\"data\":[{\"id\":\"served-over-tls\",\"object\":\"model\"}]}";

	private static Path tempDir() {
		try {
			Path dir = Files.createTempDirectory("tokengap-tls");
			dir.toFile().deleteOnExit();
			return dir;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** A key pair and certificate for localhost, made by the JDK's keytool. */
	static TlsEngine start() {
		Path dir = tempDir();
		Path keystore = dir.resolve("engine.p12");
		Path pem = dir.resolve("engine.pem");
		String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
		run(List.of(keytool, "-genkeypair", "-alias", "engine", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
				"-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-storetype", "PKCS12", "-keystore",
				keystore.toString(), "-storepass", "secret", "-keypass", "secret"));
		run(List.of(keytool, "-exportcert", "-rfc", "-alias", "engine", "-keystore", keystore.toString(), "-storepass",
				"secret", "-file", pem.toString()));
		try (InputStream in = new FileInputStream(keystore.toFile())) {
			KeyStore store = KeyStore.getInstance("PKCS12");
			store.load(in, "secret".toCharArray());
			KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
			keys.init(store, "secret".toCharArray());
			return new TlsEngine(HttpServer.create()
				.host("127.0.0.1")
				.port(0)
				.secure((spec) -> spec.sslContext(Http11SslContextSpec.forServer(keys)))
				.handle((req, res) -> res.header("content-type", "application/json")
					.sendString(Mono.just(req.uri().equals("/v1/models") ? MODELS : "{\"tls\":true}")))
				.bindNow(), pem);
		}
		catch (Exception ex) {
			throw new IllegalStateException("could not start the TLS engine", ex);
		}
	}

	private static void run(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes());
			if (process.waitFor() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
