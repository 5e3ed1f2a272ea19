package rpclab.shared;

import java.util.List;
import javax.jws.WebMethod;
import javax.jws.WebService;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.contract.Order;

/**
 * The contract as a JAX-WS web service: document/literal wrapped SOAP 1.1
 * (the JAX-WS defaults), every call delegated to the one contract
 * implementation. Parameter names stay JAX-WS's defaults (arg0, return); the
 * Rust client reads them, and the namespace, from the WSDL.
 */
@WebService(
        name = "BenchService",
        serviceName = "BenchService",
        portName = "BenchPort",
        targetNamespace = BenchWs.NAMESPACE)
public class BenchWs {
    public static final String NAMESPACE = "http://contract.rpclab/";

    private final BenchService impl = new BenchServiceImpl();

    @WebMethod
    public Order echoOrder(Order order) {
        return impl.echoOrder(order);
    }

    @WebMethod
    public List<Order> echoOrders(List<Order> orders) {
        return impl.echoOrders(orders);
    }

    @WebMethod
    public String echoString(String value) {
        return impl.echoString(value);
    }

    @WebMethod
    public String hello(String name) {
        return impl.hello(name);
    }

    @WebMethod
    public void empty() {
        impl.empty();
    }
}
