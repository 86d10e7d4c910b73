/**
 * The one Reactor Netty HTTP client setup (pools, loops, timeouts, TLS) that the proxy,
 * the engine scrape, the demo load and {@code tokengap bench} build their clients with.
 */
package dev.tokengap.client;
