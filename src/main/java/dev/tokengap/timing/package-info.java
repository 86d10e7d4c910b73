/**
 * Per-stream gap clock and stream summary (worst gap, percentiles, jitter, stalls); pure
 * Java.
 */
package dev.tokengap.timing;
