package dev.fileshare;

import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Every item across pages, fetched lazily a page at a time: an {@link Iterable} for a
 * {@code for} loop, and a {@link #stream()} for the Stream API. Each iteration (and each stream)
 * starts again from the first page.
 *
 * <pre>{@code
 * long big = client.files().iterate(100).stream().filter(f -> f.size() > 1 << 30).count();
 * }</pre>
 *
 * @param <T> the item
 */
@FunctionalInterface
public interface AutoPagingIterable<T> extends Iterable<T> {
    /**
     * A sequential, ordered stream of every item; pages are fetched as the stream is consumed, so a
     * short-circuiting operation ({@code findFirst}, {@code limit}) stops fetching.
     *
     * @return the items
     */
    default Stream<T> stream() {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL), false);
    }
}
