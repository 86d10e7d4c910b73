/**
 * Joins a gap spike to the engine state and to what the proxy saw around it.
 */
package dev.tokengap.attribution;
