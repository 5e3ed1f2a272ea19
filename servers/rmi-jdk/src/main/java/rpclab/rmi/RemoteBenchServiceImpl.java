package rpclab.rmi;

import rpclab.contract.BenchServiceImpl;

/**
 * The contract's one implementation (contract/java) as plain RMI's remote
 * object, so every framework answers alike. RemoteBenchService has the same
 * methods as the contract with RemoteException added, which an implementation
 * need not throw: the inherited methods implement it as they are. Only the
 * Remote interfaces of a class make its stub, so the stub is the same as when
 * each method was delegated by hand.
 */
public final class RemoteBenchServiceImpl extends BenchServiceImpl implements RemoteBenchService {}
