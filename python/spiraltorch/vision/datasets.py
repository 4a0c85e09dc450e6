"""Datasets read from local files (torchvision's names)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from .. import data as _data

__all__ = ["FashionMNIST"]


class FashionMNIST:
    """Fashion-MNIST as a map-style dataset: item ``i`` is ``(image, label)`` with the
    image a uint8 ``(28, 28)`` tensor (after ``transform`` when given) and the label an
    int (after ``target_transform``). Reads the IDX files of Debian's
    ``dataset-fashion-mnist`` (or ``root``); ``download=True`` is accepted for
    torchvision compatibility but never downloads: missing files raise FileNotFoundError.
    """

    classes = list(_data.FASHION_CLASSES)

    def __init__(self, root: Optional[str] = None, train: bool = True, download: bool = False,
                 transform: Optional[Callable[[Any], Any]] = None,
                 target_transform: Optional[Callable[[int], Any]] = None) -> None:
        local = root if root and _data.find_fashion_mnist(root) else None
        images, labels = _data.load_fashion_mnist(local,
                                                  "train" if train else "test", scaled=False)
        self.data = images.reshape(images.shape[0], images.shape[2], images.shape[3])
        self.targets = labels
        self._labels = labels.tolist()
        self.train = train
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return len(self._labels)

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        image, label = self.data[index], self._labels[index]
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label
