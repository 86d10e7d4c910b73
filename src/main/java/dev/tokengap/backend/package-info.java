/**
 * Everything tokengap reads from the backend engine itself: served models, scraped
 * /metrics, short history.
 */
package dev.tokengap.backend;
