package dev.tokengap.metrics;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns a request's {@code model} into a bounded {@code model_name} label value.
 *
 * <p>
 * A name is kept only when the backend serves it or it is configured, and only for the
 * first {@code max} distinct names; anything else is {@code other}, a missing model
 * {@code unknown}. Clients choose the model string, so without this cap one client could
 * create unbounded series.
 */
public final class ModelLabels {

	/** Label for models beyond the cap or not served by the backend. */
	public static final String OTHER = "other";

	/** Label for requests without a readable model. */
	public static final String UNKNOWN = "unknown";

	private final Set<String> configured;

	private final int max;

	/**
	 * Each admitted name, mapped to itself: a request's own copy of the name resolves to
	 * the one kept here, whose hash is computed once, so the meters' lookup by label does
	 * not hash the name again.
	 */
	private final Map<String, String> admitted = new ConcurrentHashMap<>();

	private volatile Set<String> served = Set.of();

	private volatile Runnable onUnlisted = () -> {
	};

	/**
	 * Creates the label policy.
	 * @param configured names always allowed
	 * @param max most distinct names
	 */
	public ModelLabels(Collection<String> configured, int max) {
		this.configured = Set.copyOf(configured);
		this.max = max;
	}

	/**
	 * Replaces the set of models the backend serves.
	 * @param models the served model ids
	 */
	public void served(Collection<String> models) {
		this.served = Set.copyOf(models);
	}

	/**
	 * Sets what to do when a request names a model that is not (yet) known, such as
	 * refreshing the backend's model list.
	 * @param action the action; must not block
	 */
	public void onUnlisted(Runnable action) {
		this.onUnlisted = action;
	}

	/**
	 * Returns the label value for a request's model.
	 * @param model the request body's {@code model}, or null
	 * @return the model itself, {@code other} or {@code unknown}
	 */
	public String resolve(String model) {
		if (model == null || model.isEmpty()) {
			return UNKNOWN;
		}
		String kept = this.admitted.get(model);
		if (kept != null) {
			return kept;
		}
		if (!this.configured.contains(model) && !this.served.contains(model)) {
			this.onUnlisted.run();
			return OTHER;
		}
		synchronized (this.admitted) {
			kept = this.admitted.get(model);
			if (kept != null) {
				return kept;
			}
			if (this.admitted.size() < this.max) {
				this.admitted.put(model, model);
				return model;
			}
		}
		return OTHER;
	}

}
