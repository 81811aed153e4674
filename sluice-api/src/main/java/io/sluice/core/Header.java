package io.sluice.core;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/** A record header: a short string key and a byte value. The value array is not copied: do not modify it after sending. */
public record Header(String key, byte[] value) {
    /** Maximum UTF-8 length of a header key in bytes. */
    public static final int MAX_KEY_BYTES = Short.MAX_VALUE;

    public Header {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
    }

    public static Header of(String key, String value) {
        return new Header(key, value.getBytes(StandardCharsets.UTF_8));
    }

    public String valueAsString() {
        return new String(value, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Header h && key.equals(h.key) && Arrays.equals(value, h.value);
    }

    @Override
    public int hashCode() {
        return 31 * key.hashCode() + Arrays.hashCode(value);
    }

    @Override
    public String toString() {
        return key + "=" + valueAsString();
    }
}
