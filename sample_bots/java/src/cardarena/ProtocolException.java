package cardarena;

/** A broken conversation with the referee: {@link Runner} prints its message as one line and exits with 1. */
public class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
