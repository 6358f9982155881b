package dev.fileshare;

import java.util.Map;

/**
 * The answer of {@link FileshareClient#stats()}: the account's statistics, limits and plan.
 *
 * @param stats the account's figures
 * @param limits the account's effective limits
 * @param plan lower-case plan name ({@code pro}, {@code business}, {@code enterprise})
 * @param extra top-level fields this SDK does not know yet (never null)
 */
public record AccountStats(Stats stats, Limits limits, String plan, Map<String, Object> extra) {
    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param stats the account's figures
     * @param limits the account's effective limits
     * @param plan lower-case plan name ({@code pro}, {@code business}, {@code enterprise})
     * @param extra top-level fields this SDK does not know yet (never null)
     */
    public AccountStats {
        extra = Json.copyExtra(extra);
    }
}
