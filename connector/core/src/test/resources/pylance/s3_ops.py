"""The S3 server (tests/s3server.py: moto behind a fault-injecting proxy) for the Scala
storage suites, kept for the life of the pylance co-process and stopped when it exits (the
co-process ends when the JVM closes its stdin)."""
import atexit
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "..", "..", "tests"))
import s3server  # noqa: E402

_server = None


def _s():
    global _server
    if _server is None:
        _server = s3server.S3Server()
        atexit.register(_server.stop)
    return _server


def start():
    """Endpoints and credentials, and a fresh bucket."""
    s = _s()
    return {"endpoint": s.endpoint, "direct": s.direct_endpoint,
            "access_key": s3server.ACCESS_KEY, "secret_key": s3server.SECRET_KEY,
            "region": s3server.REGION, "bucket": s.new_bucket("scala")}


def faults(every=0, status=503, ambiguous_puts=0, refuse_conditional=False, slow=0, delay=0.0):
    f = _s().faults
    f.reset()
    with f.lock:
        f.every, f.status, f.ambiguous_puts = every, status, ambiguous_puts
        f.refuse_conditional = refuse_conditional
        f.slow, f.delay = slow, delay
    return True


def counts(prefix=""):
    return _s().faults.counts(prefix)


def put_many(bucket, prefix, n):
    """n small objects under prefix, straight to moto."""
    c = _s().client()
    for i in range(n):
        c.put_object(Bucket=bucket, Key=f"{prefix}/k{i:05d}", Body=b"x")
    return n


def sigv4(method, url, access, secret, region, amz_date, token=None):
    """botocore's Authorization header for an unsigned-payload S3 request at amz_date."""
    import datetime
    from unittest import mock
    from botocore import auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    class Unsigned(auth.S3SigV4Auth):
        def payload(self, request):
            return "UNSIGNED-PAYLOAD"

    req = AWSRequest(method=method, url=url,
                     headers={"X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"})
    when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
    with mock.patch.object(auth, "get_current_datetime", return_value=when):
        Unsigned(Credentials(access, secret, token), "s3", region).add_auth(req)
    return {"authorization": req.headers["Authorization"], "date": req.headers["X-Amz-Date"]}
