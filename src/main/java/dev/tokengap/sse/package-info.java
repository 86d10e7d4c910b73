/**
 * SSE event-boundary scanning and classification over raw bytes; pure Java, no Spring,
 * Reactor or Micrometer.
 */
package dev.tokengap.sse;
