package dev.fileshare;

import java.util.Map;

/**
 * The answer of {@link FileshareClient#stats()}: the account's statistics, limits and plan. The
 * names are the other SDKs': {@code StatsResult} (the answer), {@link Stats} (its {@code stats}),
 * {@link Limits} (its {@code limits}).
 *
 * @param stats the account's figures
 * @param limits the account's effective limits
 * @param plan lower-case plan name ({@code pro}, {@code business}, {@code enterprise})
 * @param extra top-level fields this SDK does not know yet (never null)
 */
@SuppressWarnings("deprecation") // implements the deprecated AccountStats so that code written against it still compiles
public record StatsResult(Stats stats, Limits limits, String plan, Map<String, Object> extra) implements AccountStats {
    /**
     * Keeps {@code extra} unmodifiable and never null (its values may be null: a field the API sent as null).
     *
     * @param stats the account's figures
     * @param limits the account's effective limits
     * @param plan lower-case plan name ({@code pro}, {@code business}, {@code enterprise})
     * @param extra top-level fields this SDK does not know yet (never null)
     */
    public StatsResult {
        extra = Json.copyExtra(extra);
    }
}
