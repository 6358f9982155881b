package dev.fileshare;

import static org.junit.jupiter.api.Assertions.*;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A 200 MiB file goes up from a path and comes back down with the heap staying flat. */
class MemoryIT {
    static final long SIZE = 200L * 1024 * 1024;

    @TempDir
    Path dir;

    /** Samples the used heap while {@code work} runs; returns the growth over the baseline. */
    static long peakGrowth(Runnable work) throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        System.gc();
        Thread.sleep(100);
        long baseline = rt.totalMemory() - rt.freeMemory();
        AtomicLong peak = new AtomicLong(baseline);
        AtomicBoolean running = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> {
            while (running.get()) {
                peak.accumulateAndGet(rt.totalMemory() - rt.freeMemory(), Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        sampler.setDaemon(true);
        sampler.start();
        try {
            work.run();
        } finally {
            running.set(false);
            sampler.join();
        }
        return peak.get() - baseline;
    }

    @Test
    void twoHundredMiBFromAPathInFlatMemory() throws Exception {
        Path path = dir.resolve("big.bin");
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
            byte[] block = new byte[1024 * 1024];
            for (int i = 0; i < SIZE / block.length; i++) {
                java.util.Arrays.fill(block, (byte) i);
                block[0] = (byte) (i >> 8);
                raf.write(block);
                digest.update(block);
            }
        }
        String sha = Sha256.hex(digest.digest());
        long maxHeap = Runtime.getRuntime().maxMemory();
        try (FileshareClient client = TestServer.get().client("pro").build()) {
            FileInfo[] multipart = new FileInfo[1];
            long growth = peakGrowth(() -> multipart[0] = client.files().upload(path, UploadOptions.builder().resumable(false).build()));
            System.out.printf("multipart upload of 200 MiB: heap growth %.1f MiB (max heap %d MiB)%n", growth / 1048576.0, maxHeap >> 20);
            assertEquals(sha, multipart[0].sha256());
            assertTrue(growth < 64L * 1024 * 1024, "heap growth " + (growth >> 20) + " MiB");

            // Above the 64 MiB threshold the default is resumable: memory stays within about one 16 MiB chunk.
            FileInfo[] resumable = new FileInfo[1];
            growth = peakGrowth(() -> resumable[0] = client.files().upload(path));
            System.out.printf("resumable upload of 200 MiB: heap growth %.1f MiB%n", growth / 1048576.0);
            assertEquals(sha, resumable[0].sha256());
            assertTrue(growth < 96L * 1024 * 1024, "heap growth " + (growth >> 20) + " MiB");

            Path back = dir.resolve("back.bin");
            growth = peakGrowth(() -> client.download(resumable[0], back));
            System.out.printf("download of 200 MiB: heap growth %.1f MiB%n", growth / 1048576.0);
            assertEquals(SIZE, Files.size(back));
            assertTrue(growth < 64L * 1024 * 1024, "heap growth " + (growth >> 20) + " MiB");
            client.files().delete(multipart[0].fileId());
            client.files().delete(resumable[0].fileId());
        }
    }
}
