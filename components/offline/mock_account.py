"""The account the recording mocks model for the preflight's lookups (issue 28): IAM roles and
users (``aws:iam/getRole``, ``aws:iam/getUser``), the EC2 Spot service-linked role, and EC2's
vCPU service quotas (``aws:servicequotas/getServiceQuota``), and the AWS Price List API
(``aws:pricing/getProduct``: the table's price as a price list product document, from a
provider in us-east-1 or ap-south-1 only, as the data source is served: price_list.py).

The default account is a fresh one that has every principal the stack names at IAM's default
path ``/`` and no EC2 Spot service-linked role (an account that never launched spot has none:
aws/karpenter-provider-aws website/content/en/docs/troubleshooting.md L25-37, v1.14.1). Its
quotas: the offline render has no account to read, so every quota answers ``DEFAULT_QUOTA_VCPUS``
(nothing is refused offline; the deploy-time lookup decides). Tests set the class attributes.

Failures are raised the way the provider fails its data sources (a gRPC error carrying the data
source's message; cluster/principals.py and quotas.py cite the texts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .mock_invokes import InvokeFailed
from .mock_types import Scope

DEFAULT_QUOTA_VCPUS = 100000.0
SPOT_ROLE = "AWSServiceRoleForEC2Spot"
SPOT_ROLE_PATH = "/aws-service-role/spot.amazonaws.com/"


class MockAccount:
    """A mixin of ``RecordingMocks``: the account's IAM principals and EC2 quotas."""

    # Names (roles and users) that do not exist in the account.
    missing_iam_principals: frozenset[str] = frozenset()
    # Names whose lookup is denied (AccessDenied).
    denied_iam_principals: frozenset[str] = frozenset()
    # Name -> IAM path ("/aws-reserved/sso.amazonaws.com/us-east-1/"); others are at "/".
    iam_paths: dict[str, str] = {}
    # The EC2 Spot service-linked role: None, absent (a fresh account), else its description.
    spot_role_description: str | None = None
    # Quota code -> value (vCPUs); others answer DEFAULT_QUOTA_VCPUS.
    service_quotas: dict[str, float] = {}
    # Quota codes whose lookup is denied.
    denied_service_quotas: frozenset[str] = frozenset()
    # (region, instance type) -> the Price List's hourly USD; others answer the table's.
    price_list: dict[tuple[str, str], float] = {}
    # Whether the identity lacks pricing:GetProducts.
    denied_price_list: bool = False
    # What the API server answers the deployer's access review (cluster/access_wait.py), one
    # (allowed, detail) per attempt, then allowed: a new entry not yet in effect is
    # ((False, "401 Unauthorized"), ...). Tests set it on the class.
    api_answers: tuple[tuple[bool, str], ...] = ()

    def access_transport(self) -> Any:
        """The API server and a clock for ``access_wait.wait_until_allowed``: answers
        ``api_answers`` in order, records each attempt's server in ``api_probes``, and moves
        its clock by each sleep instead of sleeping."""
        from ..cluster import access_wait

        self.api_probes: list[str] = []
        answers = list(self.api_answers)
        now = [0.0]

        def probe_for(kubeconfig_json: str) -> Callable[[], Any]:
            import json

            server = json.loads(kubeconfig_json)["clusters"][0]["cluster"]["server"]

            def probe() -> Any:
                self.api_probes.append(server)
                ok, detail = answers.pop(0) if answers else (True, "allowed")
                return access_wait.Answer(ok, detail)

            return probe

        def sleep(seconds: float) -> None:
            now[0] += seconds

        return access_wait.Transport(probe_for, clock=lambda: now[0], sleep=sleep)

    def account_invoke(self, token: str, scope: Scope, args: dict[str, Any]) -> dict | None:
        """The answer to one of this account's invokes, None for any other token."""
        handlers: dict[str, Callable[[Scope, dict[str, Any]], dict]] = {
            "aws:iam/getRole:getRole": self._get_role,
            "aws:iam/getUser:getUser": self._get_user,
            "aws:servicequotas/getServiceQuota:getServiceQuota": self._get_quota,
            "aws:pricing/getProduct:getProduct": self._get_product,
        }
        handler = handlers.get(token)
        return handler(scope, args) if handler else None

    def _principal(self, scope: Scope, kind: str, name: str, token: str) -> dict:
        label = "IAM Role" if kind == "role" else "IAM User"
        if name in self.denied_iam_principals:
            raise _failed(
                token,
                f"reading {label} ({name}): operation error IAM: Get{kind.title()}, https "
                f"response error StatusCode: 403, RequestID: 0, api error AccessDenied: not "
                f"authorized to perform: iam:Get{kind.title()}",
            )
        path = self.iam_paths.get(name, "/")
        description = ""
        if kind == "role" and name == SPOT_ROLE:
            if self.spot_role_description is None:
                raise _failed(token, f"reading {label} ({name}): couldn't find resource")
            path, description = SPOT_ROLE_PATH, self.spot_role_description
        elif name in self.missing_iam_principals:
            raise _failed(token, f"reading {label} ({name}): couldn't find resource")
        arn = scope.arn("iam", f"{kind}{path}{name}", region=False)
        out = {"arn": arn, "path": path, "id": name, "tags": {}}
        if kind == "role":
            out.update({"name": name, "description": description})
        else:
            out.update({"userName": name, "userId": f"AIDA{name.upper()[:16]}"})
        return out

    def _get_role(self, scope: Scope, args: dict[str, Any]) -> dict:
        return self._principal(scope, "role", args["name"], "aws:iam/getRole:getRole")

    def _get_user(self, scope: Scope, args: dict[str, Any]) -> dict:
        return self._principal(scope, "user", args["userName"], "aws:iam/getUser:getUser")

    def _get_quota(self, scope: Scope, args: dict[str, Any]) -> dict:
        code, service = args["quotaCode"], args["serviceCode"]
        token = "aws:servicequotas/getServiceQuota:getServiceQuota"
        if code in self.denied_service_quotas:
            raise _failed(
                token,
                f"reading Service Quotas default Service Quota ({service}/{code}): operation "
                "error Service Quotas: GetAWSDefaultServiceQuota, https response error "
                "StatusCode: 400, RequestID: 0, AccessDeniedException: not authorized to "
                "perform: servicequotas:GetAWSDefaultServiceQuota",
            )
        value = self.service_quotas.get(code, DEFAULT_QUOTA_VCPUS)
        arn = scope.arn("servicequotas", f"{service}/{code}")
        return {**args, "value": value, "arn": arn, "adjustable": True, "id": f"{service}/{code}"}

    def _get_product(self, scope: Scope, args: dict[str, Any]) -> dict:
        """One on-demand product (terraform-provider-aws product_data_source.go: one match,
        else an error; the document's shape: the Price List API's GetProducts PriceList)."""
        import json

        from .. import prices

        token = "aws:pricing/getProduct:getProduct"
        where = scope.region
        if where not in ("us-east-1", "ap-south-1"):
            raise _failed(
                token,
                "reading Pricing Products: operation error Pricing: GetProducts, https response "
                f"error: dial tcp: lookup api.pricing.{where}.amazonaws.com: no such host",
            )
        if self.denied_price_list:
            raise _failed(
                token,
                "reading Pricing Products: operation error Pricing: GetProducts, https response "
                "error StatusCode: 400, RequestID: 0, api error AccessDeniedException: not "
                "authorized to perform: pricing:GetProducts",
            )
        fields = {f["field"]: f["value"] for f in args["filters"]}
        key = (fields["regionCode"], fields["instanceType"])
        usd = self.price_list.get(key, prices.table_price(*key))
        if usd is None:
            raise _failed(token, "Pricing product query did not return any elements")
        sku = "SKU" + _sku(key)
        document = {
            "product": {"sku": sku, "attributes": {**fields, "servicecode": "AmazonEC2"}},
            "serviceCode": "AmazonEC2",
            "terms": {
                "OnDemand": {
                    f"{sku}.JRTCKXETXF": {
                        "priceDimensions": {
                            f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                                "unit": "Hrs",
                                "pricePerUnit": {"USD": f"{usd:.10f}"},
                            }
                        },
                        "sku": sku,
                    }
                }
            },
        }
        return {**args, "result": json.dumps(document), "id": sku}


def _sku(key: tuple[str, str]) -> str:
    import hashlib

    return hashlib.sha256("/".join(key).encode()).hexdigest()[:12].upper()


def _failed(token: str, message: str) -> Exception:
    return InvokeFailed(f"invoking {token}: 1 error occurred:\n\t* {message}\n\n")
