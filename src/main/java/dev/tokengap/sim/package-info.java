/**
 * The built-in vLLM simulator: an engine model with continuous batching and
 * OpenAI-compatible endpoints.
 */
package dev.tokengap.sim;
