package dev.tokengap.sim;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * The demo's background load ({@code tokengap.demo.*}), used only in demo mode (no
 * upstream URL).
 *
 * @param load drive a gentle load through the proxy so the histograms fill at once
 * @param concurrency streams the demo keeps in flight
 */
@Validated
@ConfigurationProperties("tokengap.demo")
public record DemoProperties(@DefaultValue("true") boolean load, @DefaultValue("4") @Min(1) @Max(64) int concurrency) {
}
