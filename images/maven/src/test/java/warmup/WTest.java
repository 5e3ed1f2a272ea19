package warmup;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One JUnit 5 test, so that surefire fetches its JUnit Platform provider. */
class WTest {
    @Test
    void hello() {
        assertEquals("hello aa", W.hello("aa"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"aa"})
    void parameterized(String name) {
        assertEquals("hello " + name, W.hello(name));
    }
}
