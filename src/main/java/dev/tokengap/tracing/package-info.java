/**
 * Each proxied request's span over OpenTelemetry (OTLP), parent of the engine's own.
 */
package dev.tokengap.tracing;
