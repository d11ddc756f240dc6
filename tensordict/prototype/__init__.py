"""Old import path ``tensordict.prototype``: the tensorclass API lands here too
(``from tensordict.prototype import tensorclass``) when ``@tensorclass`` is built."""
