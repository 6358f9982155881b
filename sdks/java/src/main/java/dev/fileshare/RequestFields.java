package dev.fileshare;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The fields of a JSON request body, each one set to a value, set to an explicit {@code null}
 * (clears it) or absent (leaves it as it is). The password never shows in {@link #toString()}.
 */
abstract class RequestFields {
    private final Map<String, Object> fields;

    RequestFields(Map<String, Object> fields) {
        this.fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
    }

    /** The body to send: a map whose null values are sent as JSON nulls. */
    Map<String, Object> body() {
        return fields;
    }

    /** @return the fields set, the password redacted */
    @Override
    public String toString() {
        StringJoiner out = new StringJoiner(", ", getClass().getSimpleName() + "{", "}");
        fields.forEach((name, value) -> out.add(name + "=" + ("password".equals(name) && value != null ? "[redacted]" : value)));
        return out.toString();
    }
}
