package dev.fileshare;

/**
 * 403 {@code insufficient_scope}: the API key does not hold the scope the call needs (a key made
 * with {@code --scopes files:read,stats:read} that tries to delete a file). {@link #requiredScope()}
 * names the scope ({@code files:delete}). Nothing was done, and the call is not retried: use a key
 * with that scope (keys are made in the dashboard or with {@code fileshare key create --scopes …};
 * {@link FileshareClient#key()} shows what the current one holds).
 */
public class InsufficientScopeException extends PermissionDeniedException {
    private static final long serialVersionUID = 1L;

    InsufficientScopeException(String message, ErrorDetails details, Throwable cause) {
        super(message, details, cause);
    }
}
