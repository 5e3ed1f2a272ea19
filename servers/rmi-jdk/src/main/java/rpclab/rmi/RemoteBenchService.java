package rpclab.rmi;

import java.rmi.Remote;
import java.rmi.RemoteException;
import java.util.List;
import rpclab.contract.Order;

/**
 * The contract (rpclab.contract.BenchService) as a java.rmi.Remote interface,
 * which plain RMI requires. The JRMP method hash is computed from each method's
 * name and descriptor only (e.g. "hello(Ljava/lang/String;)Ljava/lang/String;"),
 * so these are the same hashes as BenchService's methods; the interface name
 * appears in the registry's stub (the dynamic proxy's interface list).
 */
public interface RemoteBenchService extends Remote {
    Order echoOrder(Order order) throws RemoteException;

    List<Order> echoOrders(List<Order> orders) throws RemoteException;

    String echoString(String value) throws RemoteException;

    String hello(String name) throws RemoteException;

    void empty() throws RemoteException;
}
