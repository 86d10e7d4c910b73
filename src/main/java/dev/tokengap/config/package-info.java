/**
 * Wiring only: binds properties and assembles the features into beans.
 */
package dev.tokengap.config;
