"""pylance side of the transaction matrix (TransactionMatrixSuite): one function per
operation pylance commits, each on the latest version of the dataset at `path`."""
import lance


def delete(path, pred):
    lance.dataset(path).delete(pred)
