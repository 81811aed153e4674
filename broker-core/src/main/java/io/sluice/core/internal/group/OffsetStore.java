package io.sluice.core.internal.group;

import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.core.internal.journal.DurableFiles;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Committed offsets and the last generation of each group, one file per group
 * ({@code <dataDir>/groups/<group>.offsets}, a properties file of {@code topic/partition=nextOffset} lines and one
 * {@code generation=N} line). The generation is written before a rebalance hands it out, so generations never
 * repeat, not even across broker restarts: a member of an earlier broker lifetime cannot present a generation
 * that a new member holds. Each commit rewrites the group's file to a temporary file and renames it
 * over the old one, so a crash leaves either the old or the new commit, never a torn file. The temporary file and
 * the directory are fsync'ed ({@link DurableFiles#replace}), so a commit that returned survives an OS crash too.
 * Guarded by the caller.
 */
final class OffsetStore {
    private static final String SUFFIX = ".offsets";
    private static final String GENERATION = "generation";
    private final Path dir;
    /** the last generation stored per group; guarded by the caller */
    private final Map<String, Integer> generations = new HashMap<>();

    OffsetStore(Path dir) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot create " + dir, e);
        }
    }

    /** group → (partition → next offset) */
    Map<String, Map<TopicPartition, Long>> loadAll() {
        Map<String, Map<TopicPartition, Long>> all = new HashMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                String group = decode(name.substring(0, name.length() - SUFFIX.length()));
                Properties p = new Properties();
                try (Reader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
                    p.load(r);
                }
                Map<TopicPartition, Long> offsets = new HashMap<>();
                for (String key : p.stringPropertyNames()) {
                    if (key.equals(GENERATION)) {
                        generations.put(group, Integer.parseInt(p.getProperty(key)));
                        continue;
                    }
                    int slash = key.lastIndexOf('/');
                    offsets.put(new TopicPartition(key.substring(0, slash), Integer.parseInt(key.substring(slash + 1))),
                            Long.parseLong(p.getProperty(key)));
                }
                all.put(group, offsets);
            }
        } catch (IOException | RuntimeException e) {
            throw new SluiceException.JournalException("cannot load committed offsets from " + dir + ": " + e, e);
        }
        return all;
    }

    /** The last generation stored for the group (0 if none): the next one handed out must be above it. */
    int lastGeneration(String group) {
        return generations.getOrDefault(group, 0);
    }

    /** Stores a group's new generation with its offsets, durably, before the generation is handed out. */
    void storeGeneration(String group, int generation, Map<TopicPartition, Long> offsets) {
        write(group, generation, offsets);
        generations.put(group, generation);
    }

    void store(String group, Map<TopicPartition, Long> offsets) {
        write(group, generations.get(group), offsets);
    }

    private void write(String group, Integer generation, Map<TopicPartition, Long> offsets) {
        Properties p = new Properties();
        if (generation != null) {
            p.setProperty(GENERATION, Integer.toString(generation));
        }
        for (Map.Entry<TopicPartition, Long> e : new TreeMap<>(offsets).entrySet()) {
            p.setProperty(e.getKey().topic() + "/" + e.getKey().partition(), Long.toString(e.getValue()));
        }
        Path target = dir.resolve(encode(group) + SUFFIX);
        try {
            java.io.StringWriter w = new java.io.StringWriter();
            p.store(w, null);
            DurableFiles.replace(target, w.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot store offsets and generation of group '" + group + "': " + e, e);
        }
    }

    void delete(String group) {
        try {
            Files.deleteIfExists(dir.resolve(encode(group) + SUFFIX));
            generations.remove(group);
        } catch (IOException e) {
            throw new SluiceException.JournalException("cannot delete offsets of group '" + group + "'", e);
        }
    }

    /** Group ids may hold any character; file names get a reversible hex escape of anything unusual. */
    private static String encode(String group) {
        StringBuilder sb = new StringBuilder();
        for (byte b : group.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.') {
                sb.append(c);
            } else {
                sb.append('%').append(String.format("%02x", b & 0xff));
            }
        }
        return sb.toString();
    }

    private static String decode(String name) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '%') {
                out.write(Integer.parseInt(name.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
