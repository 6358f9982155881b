package dev.fileshare;

/**
 * 403 {@code ip_not_allowed}: the API key may only be used from certain addresses ({@code allowed_ips},
 * e.g. {@code 10.0.0.0/8}) and this call came from another one (the address the server sees: behind
 * a proxy, the one it forwards). Nothing was done, and the call is not retried: every call of this key
 * from here gets the same answer. {@link #requiredScope()} is null.
 */
public class IpNotAllowedException extends PermissionDeniedException {
    private static final long serialVersionUID = 1L;

    IpNotAllowedException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
