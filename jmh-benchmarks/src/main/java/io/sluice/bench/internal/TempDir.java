package io.sluice.bench.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A temporary directory deleted (recursively) on close. */
public final class TempDir implements AutoCloseable {
    private final Path path;

    public TempDir(Path parent, String prefix) throws IOException {
        Files.createDirectories(parent);
        this.path = Files.createTempDirectory(parent, prefix);
    }

    public Path path() {
        return path;
    }

    public Path resolve(String child) {
        return path.resolve(child);
    }

    @Override
    public void close() {
        delete(path);
    }

    public static void delete(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
