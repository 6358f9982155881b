package dev.fileshare;

import java.util.List;
import java.util.function.Predicate;

/**
 * The links of the account's files: {@link #create create}, {@link #list list}, {@link #get get},
 * {@link #update update}, {@link #delete delete}, {@link #rotate rotate}. Obtain it with
 * {@link FileshareClient#links()}. Thread-safe.
 *
 * <p>Every file has a default link (its {@code publicLink}), made with it and never deleted; more
 * links let one file go to several people, each link with its own expiry, download limit and
 * password, revoked or rotated on its own. Download any of them with
 * {@link FileshareClient#download(String, java.nio.file.Path, DownloadOptions)}.
 */
public final class LinksResource {
    private static final Predicate<FileshareException> ALWAYS = e -> true;

    private final Transport transport;

    LinksResource(Transport transport) {
        this.transport = transport;
    }

    private Transport.Result call(String method, String path, Object body, Predicate<FileshareException> canRetry) {
        return transport.callJson(method, transport.url(path), body, canRetry);
    }

    private static Link link(Transport.Result result) {
        return Json.link(result.body() == null ? null : result.body().get("link"));
    }

    /**
     * A new link without a policy (no expiry, no limit, no password).
     *
     * @param fileId the file's id
     * @return the new link
     * @see #create(long, LinkOptions)
     */
    public Link create(long fileId) {
        return create(fileId, LinkOptions.none());
    }

    /**
     * A new link to a file. The call carries an {@code Idempotency-Key} (generated, or the options'
     * own), the same on every attempt, so it is retried as every other call (a lost connection
     * too): a creation that reached the server is answered with the same link, never a second one.
     *
     * @param fileId the file's id
     * @param options label, expiry, download limit, password, idempotency key (null: none)
     * @return the new link
     * @throws BadRequestException 400 {@code invalid_parameter} for a value out of its range; 422
     *     {@code idempotency_key_reused} for a key already used with other options
     * @throws LimitExceededException 403 {@code link_limit_exceeded}: the file has 100 links that are not revoked
     * @throws NotFoundException if the account has no such file
     */
    public Link create(long fileId, LinkOptions options) {
        LinkOptions o = options == null ? LinkOptions.none() : options;
        Object body = o.body().isEmpty() ? null : o.body();
        String key = transport.idempotencyKeyFor(o.idempotencyKey());
        return link(transport.callJson("POST", transport.url("/files/" + fileId + "/links"), body, key, ALWAYS));
    }

    /**
     * A file's links: the default link first, then the newest first; revoked links stay listed
     * (status {@code revoked}) for 30 days.
     *
     * @param fileId the file's id
     * @return the links (unmodifiable)
     * @throws NotFoundException if the account has no such file
     */
    public List<Link> list(long fileId) {
        return Json.links(call("GET", "/files/" + fileId + "/links", null, ALWAYS).body());
    }

    /**
     * One link.
     *
     * @param linkId the link's id
     * @return the link
     * @throws NotFoundException if the account has no such link
     */
    public Link get(long linkId) {
        return link(call("GET", "/links/" + linkId, null, ALWAYS));
    }

    /**
     * Changes a link: what the update sets is changed, what it clears is removed, the rest is kept.
     *
     * <pre>{@code client.links().update(id, LinkUpdate.builder().clearPassword().maxDownloads(5).build());}</pre>
     *
     * @param linkId the link's id
     * @param update the change
     * @return the link as it is now
     * @throws BadRequestException 400 {@code invalid_parameter}, e.g. {@code maxDownloads} below the downloads counted
     * @throws NotFoundException if the account has no such link
     */
    public Link update(long linkId, LinkUpdate update) {
        if (update == null) throw new ConfigurationException("update needs a LinkUpdate");
        return link(call("PATCH", "/links/" + linkId, update.body(), ALWAYS));
    }

    /**
     * Revokes a link: its URL answers 404 at once, and so do the download grants it gave. It stays
     * listed (status {@code revoked}) for 30 days.
     *
     * @param linkId the link's id
     * @throws BadRequestException 409 {@code default_link_required} for the file's default link
     * @throws NotFoundException if the account has no such link
     */
    public void delete(long linkId) {
        call("DELETE", "/links/" + linkId, null, ALWAYS);
    }

    /**
     * Gives a link a new URL; the old one answers 404 at once. Its policy and counts are kept.
     * Rotating the default link changes the file's {@code publicLink}. Sent again only when the
     * server answered 429 or 503.
     *
     * @param linkId the link's id
     * @return the link with its new {@code url}
     * @throws NotFoundException if the account has no such link
     */
    public Link rotate(long linkId) {
        return link(call("POST", "/links/" + linkId + "/rotate", null, Retry::nothingWasDone));
    }
}
