package dev.fileshare;

/**
 * The client or a call is not set up right: no base URL or API key (and no
 * {@code FILESHARE_BASE_URL} / {@code FILESHARE_API_KEY}), an invalid setting, resumable uploads
 * forced on a server without them, a download without a link, ...
 */
public class ConfigurationException extends FileshareException {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong with the configuration */
    public ConfigurationException(String message) {
        super(message);
    }
}
