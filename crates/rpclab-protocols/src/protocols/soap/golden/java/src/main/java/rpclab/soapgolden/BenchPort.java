package rpclab.soapgolden;

import rpclab.shared.BenchWs;
import java.util.List;
import javax.jws.WebService;
import rpclab.contract.Order;

/** The client side's service endpoint interface, matching {@link BenchWs}'s WSDL. */
@WebService(name = "BenchService", targetNamespace = BenchWs.NAMESPACE)
public interface BenchPort {
    Order echoOrder(Order arg0);

    List<Order> echoOrders(List<Order> arg0);

    String echoString(String arg0);

    String hello(String arg0);

    void empty();
}
