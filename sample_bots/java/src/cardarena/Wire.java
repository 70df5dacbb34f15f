package cardarena;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessagePacker;
import org.msgpack.core.MessageUnpacker;

/**
 * Frames (a 4-byte big-endian length, then one msgpack map) over msgpack-java's core (Debian:
 * libmsgpack-java). Messages are plain Java values: Map&lt;String, Object&gt; (in wire order),
 * List, String, Long (BigInteger above Long.MAX_VALUE), Double, Boolean and null. Strings are sent
 * as str, never bin, integers never as floats, and nothing as an extension type, as the referee
 * requires.
 */
public final class Wire {
    /** The protocol this library speaks. */
    public static final int PROTOCOL_VERSION = 1;
    /** The referee refuses a larger frame (oversize fault). */
    public static final int MAX_SEND_FRAME = 1 << 20;
    /** A larger frame from the referee means a broken stream. */
    public static final long MAX_READ_FRAME = 64L << 20;

    private final DataInputStream in;
    private final OutputStream out;

    public Wire(InputStream in, OutputStream out) {
        this.in = new DataInputStream(in);
        this.out = out;
    }

    /** The next message, or null at a clean end of input. */
    public Map<String, Object> read() throws IOException {
        int first = in.read();
        if (first < 0) {
            return null;
        }
        try {
            long length = ((long) first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8)
                    | in.readUnsignedByte();
            if (length > MAX_READ_FRAME) {
                throw new ProtocolException("a frame of " + length + " bytes from the referee is too large");
            }
            byte[] body = new byte[(int) length];
            in.readFully(body);
            try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(body)) {
                if (unpack(unpacker) instanceof Map<?, ?> message) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> typed = (Map<String, Object>) message;
                    return typed;
                }
            } catch (MessagePackException e) {
                throw new ProtocolException("the referee sent a frame that is not one msgpack map: " + e.getMessage());
            }
            throw new ProtocolException("the referee sent a frame that is not one msgpack map");
        } catch (EOFException e) {
            throw new ProtocolException("input ended inside a frame");
        }
    }

    /** Sends one message as a frame and flushes. */
    public void write(Map<String, Object> message) throws IOException {
        MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();
        pack(packer, message);
        byte[] body = packer.toByteArray();
        if (body.length > MAX_SEND_FRAME) {
            throw new ProtocolException("a frame of " + body.length + " bytes is over the referee's limit of "
                    + MAX_SEND_FRAME);
        }
        int size = body.length;
        out.write(new byte[] {(byte) (size >>> 24), (byte) (size >>> 16), (byte) (size >>> 8), (byte) size});
        out.write(body);
        out.flush();
    }

    private static Object unpack(MessageUnpacker unpacker) throws IOException {
        MessageFormat format = unpacker.getNextFormat();
        switch (format.getValueType()) {
            case NIL:
                unpacker.unpackNil();
                return null;
            case BOOLEAN:
                return unpacker.unpackBoolean();
            case INTEGER:
                if (format == MessageFormat.UINT64) {
                    BigInteger big = unpacker.unpackBigInteger();
                    return big.bitLength() < 64 ? (Object) big.longValue() : big;
                }
                return unpacker.unpackLong();
            case FLOAT:
                return unpacker.unpackDouble();
            case STRING:
                return unpacker.unpackString();
            case BINARY:
                return unpacker.readPayload(unpacker.unpackBinaryHeader());
            case ARRAY: {
                int size = unpacker.unpackArrayHeader();
                List<Object> list = new ArrayList<>(size);
                for (int i = 0; i < size; i++) {
                    list.add(unpack(unpacker));
                }
                return list;
            }
            case MAP: {
                int size = unpacker.unpackMapHeader();
                Map<String, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < size; i++) {
                    if (!(unpack(unpacker) instanceof String key)) {
                        throw new ProtocolException("the referee sent a map with a key that is not a str");
                    }
                    map.put(key, unpack(unpacker));
                }
                return map;
            }
            default:
                throw new ProtocolException("the referee sent an extension type");
        }
    }

    private static void pack(MessagePacker packer, Object value) throws IOException {
        if (value == null) {
            packer.packNil();
        } else if (value instanceof Boolean bool) {
            packer.packBoolean(bool);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            packer.packLong(((Number) value).longValue());
        } else if (value instanceof BigInteger big) {
            packer.packBigInteger(big);
        } else if (value instanceof String text) {
            packer.packString(text);
        } else if (value instanceof Map<?, ?> map) {
            packer.packMapHeader(map.size());
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (!(entry.getKey() instanceof String)) {
                    throw new ProtocolException("a map to send has a key that is not a String: " + entry.getKey());
                }
                pack(packer, entry.getKey());
                pack(packer, entry.getValue());
            }
        } else if (value instanceof List<?> list) {
            packer.packArrayHeader(list.size());
            for (Object item : list) {
                pack(packer, item);
            }
        } else {
            throw new ProtocolException("cannot send a " + value.getClass().getName()
                    + " (send maps, lists, strings, integers, booleans and null: the referee refuses floats)");
        }
    }
}
