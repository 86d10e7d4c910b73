/**
 * The proxy path: inbound handler, upstream client, header rules, per-event flushed relay
 * and error mapping.
 */
package dev.tokengap.proxy;
