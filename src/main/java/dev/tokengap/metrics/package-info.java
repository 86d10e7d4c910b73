/**
 * The meter catalogue (names, tags, bucket edges) and the recorders that feed it.
 */
package dev.tokengap.metrics;
