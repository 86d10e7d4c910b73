/**
 * The built-in vLLM simulator: an engine model with continuous batching and vLLM's HTTP
 * endpoints (chat, completions, responses, Anthropic-style messages, audio), each stream
 * shape written as vLLM writes it.
 */
package dev.tokengap.sim;
