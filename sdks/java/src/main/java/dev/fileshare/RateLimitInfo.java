package dev.fileshare;

/**
 * The {@code RateLimit-*} headers of a response, for the window that binds first.
 *
 * @param limit the limit of that window ({@code RateLimit-Limit}), or null
 * @param remaining requests left in it ({@code RateLimit-Remaining}), or null
 * @param reset seconds until it frees a request ({@code RateLimit-Reset}), or null
 */
public record RateLimitInfo(Long limit, Long remaining, Long reset) {}
