/**
 * The proxy-overhead lab harness of {@code bench/overhead.sh} and
 * {@code bench/profile.sh}: the stamped SSE backend and the probe that times each event's
 * one-way delay. Test sources, so not in the jar; the scripts run these mains from the
 * test classpath.
 */
package dev.tokengap.lab;
