package dev.fileshare;

import java.util.Map;

/**
 * The answer of {@link FileshareClient#stats()} as SDK versions before 0.2.0 named it. Now an
 * interface that {@link StatsResult} implements, so that {@code AccountStats s = client.stats();}
 * and its accessors still compile.
 *
 * @deprecated use {@link StatsResult}, the name the other SDKs use
 */
@Deprecated(since = "0.2.0")
public interface AccountStats {
    /** @return the account's figures */
    Stats stats();

    /** @return the account's effective limits */
    Limits limits();

    /** @return lower-case plan name */
    String plan();

    /** @return top-level fields this SDK does not know yet (never null) */
    Map<String, Object> extra();
}
