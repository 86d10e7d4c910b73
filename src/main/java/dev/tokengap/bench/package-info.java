/**
 * {@code tokengap bench}: a streaming load client in the manner of {@code vllm bench serve} that times every SSE
 * event on arrival, and the stamped backend and probe of the proxy-overhead benchmark.
 */
package dev.tokengap.bench;
