package dev.fileshare;

/**
 * 403: the key may not do this. {@code plan_not_supported} (the account's plan has no API access)
 * is thrown as this class itself; a key's own limits as its subclasses:
 * {@link InsufficientScopeException} ({@code insufficient_scope}: the key lacks the call's scope) and
 * {@link IpNotAllowedException} ({@code ip_not_allowed}: the key may not be used from this address).
 * None of them is retried: the same request gets the same answer.
 *
 * <pre>{@code
 * try {
 *     client.files().delete(id);
 * } catch (InsufficientScopeException e) {
 *     System.out.println("this key needs the scope " + e.requiredScope());
 * } catch (PermissionDeniedException e) {
 *     System.out.println(e.code() + ": " + e.getMessage());
 * }
 * }</pre>
 */
public class PermissionDeniedException extends FileshareException {
    private static final long serialVersionUID = 2L;

    /** The scope the call needed, or null. */
    private final String requiredScope;

    PermissionDeniedException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
        this.requiredScope = Errors.requiredScope(details);
    }

    /**
     * The scope the call needed (e.g. {@code files:delete}): the body's {@code error.required_scope},
     * else the {@code scope="…"} of the {@code WWW-Authenticate} header. Set for
     * {@link InsufficientScopeException}; null when the answer names no scope (a plan or address refusal).
     *
     * @return the scope the key lacks, or null
     */
    public String requiredScope() {
        return requiredScope;
    }
}
