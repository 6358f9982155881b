package dev.fileshare;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;

/** The API's times ({@code YYYY-MM-DD HH:MM:SS}, UTC) and durations (whole seconds). */
final class ApiTime {
    private static final DateTimeFormatter API_DATE = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private ApiTime() {}

    /** An API time as a date-time in UTC; null for null or a value that cannot be read. */
    static OffsetDateTime parse(String value) {
        if (value == null) return null;
        try {
            return LocalDateTime.parse(value, API_DATE).atOffset(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            try {
                return OffsetDateTime.parse(value).withOffsetSameInstant(ZoneOffset.UTC);
            } catch (DateTimeParseException again) {
                return null;
            }
        }
    }

    /** An instant in the API's format (UTC, to the second; a fraction of a second is dropped). */
    static String format(Instant instant) {
        return API_DATE.format(instant.truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.UTC));
    }

    /** A duration in whole seconds, a fraction of a second rounded up (500 ms is 1 s, not 0). */
    static long seconds(Duration duration) {
        return duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
    }
}
