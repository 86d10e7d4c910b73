/**
 * {@code tokengap bench}: a streaming load client in the manner of
 * {@code vllm bench serve} that times every SSE event on arrival.
 */
package dev.tokengap.bench;
