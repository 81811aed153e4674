package io.sluice.core.internal.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Small files that must survive an OS crash once written (committed offsets, topic configs): write a temporary
 * file, fsync it, rename it over the target, fsync the directory. A rename alone survives a process crash, but
 * after an OS crash it may be undone, or point at a file whose bytes never reached the disk.
 */
public final class DurableFiles {
    private DurableFiles() {
    }

    /** Replaces {@code target} with {@code content} atomically and durably (the parent directory is fsync'ed). */
    public static void replace(Path target, byte[] content) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
        fsyncDirectory(target.toAbsolutePath().getParent());
    }

    /** Makes the directory's entries (created, renamed, deleted files) durable. */
    public static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /** Forces a file's data (including pages written through a shared memory mapping) and size to disk. */
    public static void fsync(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }
}
